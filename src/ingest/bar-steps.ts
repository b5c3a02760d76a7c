/**
 * Steps from tqdm progress bars and from the Hugging Face Trainer's log dicts that go with its bar.
 * Stateful: a bar's drawings say which step is done only against the one before it.
 *
 * - A bar counts steps when it is the trainer's main bar: not one drawn below it (a nested bar moves
 *   the cursor back up: `nested`), not an evaluation bar (Lightning's `Validation DataLoader 0`,
 *   `Sanity Checking`, …), and, when it has a description, one that names training (`Epoch 0`,
 *   `Training`, `train step`): `Loading checkpoint shards: 2/2 […, 1.50s/it]` before a run starts is
 *   no step 2 of 2. Each new position n is step n, its time 1/rate, `total` the bar's M.
 * - PyTorch Lightning's train bar (`Epoch E: …`) restarts each epoch: its steps go on from the last
 *   epoch's. Lightning draws each batch twice, the position first (the postfix still the last
 *   batch's) then the postfix (TQDMProgressBar.on_train_batch_end: _update_n, then set_postfix):
 *   the loss of step n is the one of its second drawing. The run's step count is not on the bar
 *   (it shows one epoch), so it gives no `total`.
 * - Any other bar takes the loss its postfix shows with the new position.
 * - The Trainer's dicts (`{'loss': …, 'learning_rate': …, 'epoch': …}`) carry no step. Its
 *   ProgressCallback writes them with tqdm.write, which redraws the bar at once after the line with
 *   the step just done (on_step_end updates the bar before on_log), while the drawing before the
 *   line may lag (tqdm draws at most every 0.1 s): a dict waits for the next drawing and takes its
 *   position. Without a bar (disable_tqdm) the n-th dict is step n: nothing better is printed.
 */
import type { ParsedStep } from './step-formats.js';
import { parseTqdmBar, type TqdmBar } from './tqdm-bar.js';

const NOT_TRAINING = /valid|sanity|test|predict|eval/i;
const TRAINING = /train|step|iter|epoch|batch/i;
const LIGHTNING_EPOCH = /^Epoch (\d+)$/;
/** postfix keys that name the training loss, in order of preference */
const LOSS_KEYS = ['train_loss', 'loss', 'train_loss_step'];

function postfixLoss(p: Record<string, string>): number | undefined {
  let v = LOSS_KEYS.map((k) => p[k]).find((x) => x !== undefined);
  if (v === undefined) {
    const k = Object.keys(p).find((key) => key.endsWith('loss') && !NOT_TRAINING.test(key));
    v = k === undefined ? undefined : p[k];
  }
  if (v === undefined) return undefined;
  const x = v === 'nan' ? Number.NaN : Number(v);
  return Number.isNaN(x) && v !== 'nan' ? undefined : x;
}

export class BarSteps {
  /** the main bar's last drawing */
  private n = 0;
  private epoch = -1;
  /** steps of the epochs before this one, and the most of this one (Lightning) */
  private offset = 0;
  private epochSteps = 0;
  private total: number | undefined;
  /** Lightning: whether step n's loss was taken (its second drawing) */
  private lossTaken = true;
  private barSeen = false;
  private hfSeen = false;
  private hfOrdinal = 0;
  private heldDict: Record<string, number | string> | null = null;

  /** A drawing of a bar (a line or a redraw): the steps it tells; null: it is no bar. */
  bar(line: string, nested: boolean): ParsedStep[] | null {
    const b = parseTqdmBar(line);
    if (b === null) return null;
    const out: ParsedStep[] = [];
    if (nested || NOT_TRAINING.test(b.desc) || (b.desc !== '' && !TRAINING.test(b.desc))) return out;
    const ep = LIGHTNING_EPOCH.exec(b.desc);
    if (ep !== null) this.lightning(b, Number(ep[1]), out);
    else this.plain(b, out);
    this.barSeen = true;
    if (this.heldDict !== null) this.releaseDict(out);
    return out;
  }

  private lightning(b: TqdmBar, epoch: number, out: ParsedStep[]): void {
    if (epoch !== this.epoch) {
      // the bar was reset to 0 before its new description: the epoch's length is its most
      this.offset += this.epochSteps;
      this.epochSteps = 0;
      this.epoch = epoch;
      this.n = 0;
    }
    this.epochSteps = Math.max(this.epochSteps, b.n);
    const step = this.offset + b.n;
    if (b.n !== this.n) {
      this.n = b.n;
      this.lossTaken = false;
      if (b.n > 0) out.push(withTime({ step, format: 'lightning' }, b));
      return;
    }
    const loss = postfixLoss(b.postfix);
    if (this.lossTaken || loss === undefined || b.n === 0) return;
    this.lossTaken = true;
    out.push(withTime({ step, loss, format: 'lightning' }, b));
  }

  private plain(b: TqdmBar, out: ParsedStep[]): void {
    this.total = b.total;
    if (b.n === this.n) return;
    this.n = b.n;
    if (b.n === 0) return;
    const p: ParsedStep = withTime({ step: b.n, format: this.hfSeen ? 'hf' : 'tqdm' }, b);
    if (b.total !== undefined) p.total = b.total;
    const loss = postfixLoss(b.postfix);
    if (loss !== undefined) p.loss = loss;
    out.push(p);
  }

  /** A Trainer log dict with a loss: a step once its bar says which. */
  hfDict(d: Record<string, number | string>): ParsedStep[] {
    this.hfSeen = true;
    const out = this.flush();
    if (this.barSeen) this.heldDict = d;
    else out.push(hfStep(++this.hfOrdinal, d, undefined));
    return out;
  }

  /** The end of the output (or a closing dict): a dict still waiting takes the last position. */
  flush(): ParsedStep[] {
    const out: ParsedStep[] = [];
    if (this.heldDict !== null) this.releaseDict(out);
    return out;
  }

  private releaseDict(out: ParsedStep[]): void {
    out.push(hfStep(this.offset + this.n, this.heldDict!, this.total));
    this.heldDict = null;
  }
}

function withTime(p: ParsedStep, b: TqdmBar): ParsedStep {
  if (b.secondsPerIt !== undefined) p.seconds = b.secondsPerIt;
  return p;
}

function hfStep(step: number, d: Record<string, number | string>, total: number | undefined): ParsedStep {
  const p: ParsedStep = { step, loss: d.loss as number, format: 'hf' };
  if (typeof d.learning_rate === 'number') p.lr = d.learning_rate;
  if (total !== undefined) p.total = total;
  return p;
}
