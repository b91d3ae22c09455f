#include "db/sqlite/sqlite_oci_store.h"
// Placeholder: written by the registry work of issue #5.
