/**
 * A file's format told by its first bytes (its magic number), for uploads whose declared type is
 * not to be trusted further than a check: images and PDFs to read or print, zip packages.
 */
export type Sniffed = "png" | "jpeg" | "gif" | "tiff" | "webp" | "pdf" | "zip";

export function sniff(b: Uint8Array): Sniffed | null {
  const at = (offset: number, ...sig: number[]) => sig.every((v, i) => b[offset + i] === v);
  if (at(0, 0x89, 0x50, 0x4e, 0x47)) return "png";
  if (at(0, 0xff, 0xd8, 0xff)) return "jpeg";
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return "gif";
  if (at(0, 0x49, 0x49, 0x2a, 0x00) || at(0, 0x4d, 0x4d, 0x00, 0x2a)) return "tiff";
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return "webp";
  if (at(0, 0x25, 0x50, 0x44, 0x46, 0x2d)) return "pdf";
  if (at(0, 0x50, 0x4b, 0x03, 0x04)) return "zip";
  return null;
}
