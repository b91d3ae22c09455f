// Placeholder: token auth work of issue #5.
