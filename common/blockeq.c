#include "common/blockeq.h"

#include <stdio.h>
#include <string.h>

int block_eq_parse(int eq[3], const char *params)
{
    static const char key[] = "\"block_eq\":[";
    const char *p = params ? strstr(params, key) : NULL;
    eq[0] = eq[1] = eq[2] = 0;
    if (p && (sscanf(p + sizeof key - 1, "%d,%d,%d", &eq[0], &eq[1], &eq[2]) != 3 || eq[0] < 0 ||
              eq[1] < 0 || eq[2] < 0))
        eq[0] = eq[1] = eq[2] = 0;
    return eq[0] > 0 || eq[1] > 0 || eq[2] > 0;
}

int block_eq_fits(const int eq[3], int bx, int by, int bz)
{
    return (!eq[0] || eq[0] == bx) && (!eq[1] || eq[1] == by) && (!eq[2] || eq[2] == bz);
}
