#include "client/oci_client.h"
// Placeholder: written by the client work of issue #5.
