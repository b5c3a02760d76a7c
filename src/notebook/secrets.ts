/**
 * Secrets never reach the notebook or the report. A variable is a secret when a `_`-separated part
 * of its name is a credential word (HF_TOKEN, WANDB_API_KEY, AWS_SECRET_ACCESS_KEY, DB_PASSWORD) or
 * the name ends in one (GITHUBTOKEN). Parts, not substrings: TOKENIZERS_PARALLELISM is no secret.
 */

export const MASK = '***';

const WORDS = new Set([
  'TOKEN',
  'TOKENS',
  'SECRET',
  'SECRETS',
  'PASSWORD',
  'PASSWD',
  'PASS',
  'PASSPHRASE',
  'KEY',
  'APIKEY',
  'CREDENTIAL',
  'CREDENTIALS',
  'AUTH',
  'COOKIE',
  'PRIVATE',
  'SIGNATURE',
]);
const SUFFIX = /(TOKEN|SECRET|PASSWORD|PASSWD|APIKEY|API_KEY|ACCESS_KEY|PRIVATE_KEY)$/;

export function isSecretName(name: string): boolean {
  const upper = name.toUpperCase().replace(/-/g, '_');
  if (SUFFIX.test(upper)) return true;
  return upper.split('_').some((p) => WORDS.has(p));
}

export function maskEnv(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) out[k] = isSecretName(k) && v !== '' ? MASK : v;
  return out;
}

/**
 * Mask secrets in an argv: `--hf-token X`, `--api-key=X`, and `NAME=value` words whose NAME looks
 * like a secret (env assignments in front of a command).
 */
export function maskArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const flag = /^--?([A-Za-z][\w-]*)(=(.*))?$/.exec(a);
    if (flag && isSecretName(flag[1]!)) {
      if (flag[2] !== undefined) out.push(`${a.slice(0, a.indexOf('=') + 1)}${MASK}`);
      else {
        out.push(a);
        if (i + 1 < argv.length) {
          out.push(MASK);
          i++;
        }
      }
      continue;
    }
    const assign = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(a);
    if (assign && isSecretName(assign[1]!)) {
      out.push(`${assign[1]}=${MASK}`);
      continue;
    }
    out.push(a);
  }
  return out;
}

/** Mask every value of a secret-named env var that appears verbatim in free text (log excerpts). */
export function maskText(text: string, env: Record<string, string>): string {
  let t = text;
  for (const [k, v] of Object.entries(env))
    if (isSecretName(k) && v.length >= 4 && v !== MASK) t = t.split(v).join(MASK);
  return t;
}
