// Placeholder: written by the projection work of issue #5.
