/**
 * Remote output is untrusted: before anything reaches the screen, every terminal escape sequence
 * (CSI, OSC, DCS, single-character escapes) and every C0/C1 control character except tab is removed,
 * so a hostile or buggy trainer cannot move the cursor, retitle the window or write to the clipboard.
 */

// CSI: ESC [ params intermediates final; OSC/DCS/SOS/PM/APC: ESC ] ... (BEL | ESC \); other: ESC + one char.
// The 8-bit C1 forms (0x9b CSI, 0x9d OSC, ...) are handled too.
const ESCAPES =
  /(?:\u001b\[|\u009b)[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[\s\S]*?(?:\u0007|\u001b\\|\u009c|$)|\u001b[\u0020-\u002f]*[\u0030-\u007e]?/g;
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Remove escape sequences and control characters (keeps `\t` and `\n`). */
export function stripTerminalEscapes(s: string): string {
  if (!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(s)) return s;
  return s.replace(ESCAPES, '').replace(CONTROLS, '');
}
