/** Sizes as the limits count them: UTF-8 bytes, and JSON in its compact form. */
import type { Json } from "../../../json";
import { utf8Length } from "../../../bytes";

/** A JSON value's compact text and its size. */
export function serialized(value: Json): { text: string; bytes: number } {
  const text = JSON.stringify(value);
  return { text, bytes: utf8Length(text) };
}
