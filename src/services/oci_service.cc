#include "services/oci_service.h"
// Placeholder: written by the registry work of issue #5.
