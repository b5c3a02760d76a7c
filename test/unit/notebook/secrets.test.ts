import { describe, expect, it } from 'vitest';
import { isSecretName, MASK, maskArgv, maskEnv, maskText } from '../../../src/notebook/secrets.js';

describe('secret masking', () => {
  it('masks names that look like tokens, keys and passwords, not ones that merely contain the letters', () => {
    for (const s of [
      'HF_TOKEN',
      'WANDB_API_KEY',
      'AWS_SECRET_ACCESS_KEY',
      'DB_PASSWORD',
      'GITHUBTOKEN',
      'SSH_PASSPHRASE',
      'api-key',
    ])
      expect(isSecretName(s), s).toBe(true);
    for (const s of [
      'TOKENIZERS_PARALLELISM',
      'NSA_PREFILL_BATCHED',
      'PWD',
      'KEYBOARD_LAYOUT',
      'NSA_HEARTBEAT_EVERY',
    ])
      expect(isSecretName(s), s).toBe(false);
  });

  it('masks env values and keeps the rest', () => {
    expect(maskEnv({ HF_TOKEN: 'hf_abc123', NSA_PREFILL_BATCHED: '1', EMPTY_TOKEN: '' })).toEqual({
      HF_TOKEN: MASK,
      NSA_PREFILL_BATCHED: '1',
      EMPTY_TOKEN: '',
    });
  });

  it('masks secret flags and assignments in a command line', () => {
    expect(
      maskArgv([
        'python3',
        'train.py',
        '--hf-token',
        'hf_abc',
        '--api-key=sk-1',
        'WANDB_API_KEY=xyz',
        '--steps',
        '5',
      ]),
    ).toEqual([
      'python3',
      'train.py',
      '--hf-token',
      MASK,
      `--api-key=${MASK}`,
      `WANDB_API_KEY=${MASK}`,
      '--steps',
      '5',
    ]);
  });

  it('masks secret values that a log line repeats', () => {
    expect(maskText('[boot] token hf_abcdef loaded', { HF_TOKEN: 'hf_abcdef', NSA_X: 'boot' })).toBe(
      `[boot] token ${MASK} loaded`,
    );
  });
});
