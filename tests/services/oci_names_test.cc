// Placeholder: registry work of issue #5.
