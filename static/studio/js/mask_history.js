// The mask as a list of operations (strokes, clear, invert) with undo and redo. Replaying the list
// draws the layer, so the mask stays its own layer and survives a reload (kept in sessionStorage).

export class MaskHistory {
  constructor(key) {
    this.key = key;
    this.ops = [];
    this.undone = [];
    try {
      const saved = JSON.parse(sessionStorage.getItem(key) ?? "null");
      if (saved) ({ ops: this.ops = [], undone: this.undone = [] } = saved);
    } catch {
      /* a damaged entry starts a fresh mask */
    }
  }

  push(op) {
    this.ops.push(op);
    this.undone = [];
    this.save();
  }

  undo() {
    if (!this.ops.length) return false;
    this.undone.push(this.ops.pop());
    this.save();
    return true;
  }

  redo() {
    if (!this.undone.length) return false;
    this.ops.push(this.undone.pop());
    this.save();
    return true;
  }

  get inverted() {
    // An invert flips everything painted before it; a clear starts over, not inverted.
    let inverted = false;
    for (const op of this.ops) {
      if (op.type === "invert") inverted = !inverted;
      if (op.type === "clear") inverted = false;
    }
    return inverted;
  }

  save() {
    try {
      sessionStorage.setItem(this.key, JSON.stringify({ ops: this.ops, undone: this.undone }));
    } catch {
      /* storage full: the mask still works for this page */
    }
  }
}

function stroke(ctx, op) {
  ctx.save();
  ctx.globalCompositeOperation = op.tool === "eraser" ? "destination-out" : "source-over";
  ctx.strokeStyle = ctx.fillStyle = "#ff2d78";
  ctx.lineWidth = op.size;
  ctx.lineCap = ctx.lineJoin = "round";
  const [first, ...rest] = op.points;
  ctx.beginPath();
  if (!rest.length) {
    ctx.arc(first[0], first[1], op.size / 2, 0, Math.PI * 2);
    ctx.fill();
  } else {
    ctx.moveTo(first[0], first[1]);
    for (const [x, y] of rest) ctx.lineTo(x, y);
    ctx.stroke();
  }
  ctx.restore();
}

// Draw the layer: the painted area opaque, the rest transparent. With `invert` the invert
// operations apply (what the page shows); without, only the strokes (what is sent, with a flag).
export function paint(ctx, ops, { invert = true } = {}) {
  const { width, height } = ctx.canvas;
  ctx.clearRect(0, 0, width, height);
  for (const op of ops) {
    if (op.type === "clear") ctx.clearRect(0, 0, width, height);
    else if (op.type === "stroke") stroke(ctx, op);
    else if (op.type === "invert" && invert) {
      ctx.save();
      ctx.globalCompositeOperation = "xor";
      ctx.fillStyle = "#ff2d78";
      ctx.fillRect(0, 0, width, height);
      ctx.restore();
    }
  }
}
