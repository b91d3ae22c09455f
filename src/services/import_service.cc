#include "services/import_service.h"
