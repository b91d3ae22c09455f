#pragma once
// Placeholder: written by the registry work of issue #5.
