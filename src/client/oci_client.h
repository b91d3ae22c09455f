#pragma once
// Placeholder: written by the client work of issue #5.
