#include "api/oci/oci_handlers.h"
// Placeholder: written by the registry work of issue #5.
