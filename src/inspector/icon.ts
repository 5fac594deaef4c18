/**
 * The inspector's icon, served as `inspect/icon.svg`.
 *
 * @module
 */

/** The SVG of `GET /inspect/icon.svg`. */
export const ICON_SVG: string = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">` +
  `<rect width="16" height="16" rx="3" fill="#24292f"/>` +
  `<path d="M4 4h8M4 8h5M4 12h7" stroke="#7ee2a8" stroke-width="2" stroke-linecap="round"/></svg>`;
