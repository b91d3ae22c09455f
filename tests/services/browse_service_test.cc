#include "services/browse_service.h"
