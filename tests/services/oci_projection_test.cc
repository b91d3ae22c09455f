// Placeholder: projection work of issue #5.
