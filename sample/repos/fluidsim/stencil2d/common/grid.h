#pragma once
// The simulation grid shared by every kernel.

struct Grid {
    int nx, ny;     // interior points
    float dx, dy;   // spacing
    float *u;       // field, (nx + 2) * (ny + 2) with a halo of one
};

#define IDX(g, i, j) ((j) * ((g).nx + 2) + (i))
