#include "cli/oci_command.h"
// Placeholder: written by the client work of issue #5.
