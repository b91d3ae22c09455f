#include "client/oci_transfer.h"
// Placeholder: written by the client work of issue #5.
