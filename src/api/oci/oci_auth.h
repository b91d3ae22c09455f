#pragma once
// Placeholder: written by the token auth work of issue #5.
