#include "git/history.h"
