#include "api/oci/oci_routes.h"
// Placeholder: written by the registry work of issue #5.
