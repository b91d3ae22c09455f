#include "services/oci_token.h"
// Placeholder: written by the token auth work of issue #5.
