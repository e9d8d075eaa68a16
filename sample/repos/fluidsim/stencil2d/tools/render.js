// Renders a field dump to a PNG in the browser.
export function render(canvas, field, nx, ny) {
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(nx, ny);
  for (let k = 0; k < nx * ny; k++) img.data[4 * k + 3] = 255 * field[k];
  ctx.putImageData(img, 0, 0);
}
