// Placeholder: client work of issue #5.
