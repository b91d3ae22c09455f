#include "services/card_index.h"
