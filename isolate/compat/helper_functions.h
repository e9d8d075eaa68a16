/* lscat's own stand-in for the CUDA samples' helper_functions.h: the string and timer helpers
 * together, as the original's documented interface promises; used only when a repository lacks it. */
#ifndef LSCAT_COMPAT_HELPER_FUNCTIONS_H
#define LSCAT_COMPAT_HELPER_FUNCTIONS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "helper_string.h"
#include "helper_timer.h"

#endif
