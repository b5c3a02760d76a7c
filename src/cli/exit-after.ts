/**
 * Print, then exit, once the bytes are out. process.exit() right after a write may drop what the
 * pipe has not taken yet: a 256-rank verdict's JSON (over 200 KB) reached `| jq` cut short. The
 * exit waits for the write's callback (the data handed to the OS), and for stderr's too.
 */
export function exitAfter(text: string, code: number): Promise<never> {
  return new Promise<never>(() => {
    process.stdout.write(text, () => process.stderr.write('', () => process.exit(code)));
  });
}
