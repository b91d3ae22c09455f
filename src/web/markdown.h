#pragma once
// Markdown (model cards) to safe HTML with cmark-gfm.
