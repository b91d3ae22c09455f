#include "api/oci/oci_auth.h"
// Placeholder: written by the token auth work of issue #5.
