#pragma once
// History: log, diff, blame, grep, archive and refs through the git binary (issue #4).
