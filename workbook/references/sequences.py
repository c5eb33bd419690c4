"""Chapter 06's reference: Keras's ``pad_sequences`` rule for integer sequences, written from its
documentation (pre padding and pre truncation by default), one sequence at a time."""
import numpy as np


def pad(sequences, maxlen, padding="pre", truncating="pre", value=0):
    out = np.full((len(sequences), maxlen), value, np.int32)
    for i, seq in enumerate(sequences):
        seq = list(seq)
        kept = seq[-maxlen:] if truncating == "pre" else seq[:maxlen]
        if not kept:
            continue
        if padding == "pre":
            out[i, maxlen - len(kept):] = kept
        else:
            out[i, :len(kept)] = kept
    return out
