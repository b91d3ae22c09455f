#include "web/markdown.h"
