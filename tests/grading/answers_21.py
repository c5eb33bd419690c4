"""Wrong and different correct answers for notebook 21 (capstone): ``capstone_speedup`` (timing
two functions properly) and ``capstone_fast_step`` (a faster style-transfer step, same results)."""

WRONG_ANSWERS = {
    "capstone_speedup": {
        # times the first calls too: the trace and the caches are counted
        "no_warm_up": """
ref_times, cand_times = [], []
for _ in range(rounds):
    t0 = timer(); reference(); ref_times.append(timer() - t0)
    t0 = timer(); candidate(); cand_times.append(timer() - t0)
return float(np.median(ref_times) / np.median(cand_times))
""",
        # the mean: one slow spell moves it
        "mean_not_median": """
reference(); candidate()
ref_times, cand_times = [], []
for _ in range(rounds):
    t0 = timer(); reference(); ref_times.append(timer() - t0)
    t0 = timer(); candidate(); cand_times.append(timer() - t0)
return float(np.mean(ref_times) / np.mean(cand_times))
""",
        # all the reference's rounds, then all the candidate's: a slow spell falls on one of them
        "not_interleaved": """
reference(); candidate()
ref_times, cand_times = [], []
for _ in range(rounds):
    t0 = timer(); reference(); ref_times.append(timer() - t0)
for _ in range(rounds):
    t0 = timer(); candidate(); cand_times.append(timer() - t0)
return float(np.median(ref_times) / np.median(cand_times))
""",
        # candidate / reference: a faster candidate gets a speedup below 1
        "ratio_upside_down": """
reference(); candidate()
ref_times, cand_times = [], []
for _ in range(rounds):
    t0 = timer(); reference(); ref_times.append(timer() - t0)
    t0 = timer(); candidate(); cand_times.append(timer() - t0)
return float(np.median(cand_times) / np.median(ref_times))
""",
        # its own clock instead of the timer it is given
        "ignores_the_timer": """
reference(); candidate()
ref_times, cand_times = [], []
for _ in range(rounds):
    t0 = time.perf_counter(); reference(); ref_times.append(time.perf_counter() - t0)
    t0 = time.perf_counter(); candidate(); cand_times.append(time.perf_counter() - t0)
return float(np.median(ref_times) / np.median(cand_times))
""",
        # the shortcut: the grader's own measurement
        "calls_the_package_reference": """
return capstone_reference.speedup(reference, candidate, rounds=rounds, timer=timer)
""",
    },
    "capstone_fast_step": {
        # the naive step as it is: right results, no faster
        "naive_step_unchanged": """
def step(image):
    return naive_step(image, content, style, weights)
return step
""",
        # computes one result and returns it for every image
        "caches_the_first_result": """
cache = {}
def step(image):
    if "result" not in cache:
        cache["result"] = naive_step(image, content, style, weights)
    return cache["result"]
return step
""",
        # the content term dropped: faster, and wrong
        "style_term_only": """
targets = capstone_reference.targets(content, style, weights)
def step(image):
    x = aics.constant(image)
    with aics.GradientTape() as tape:
        tape.watch(x)
        feats = capstone_reference.features(x, weights)
        total = 1e3 * style_transfer.style_loss(feats, targets["gram"])
    return float(total), tape.gradient(total, x).numpy()
return step
""",
        # targets from the wrong image: content and style swapped
        "content_and_style_swapped": """
targets = capstone_reference.targets(style, content, weights)
def step(image):
    x = aics.constant(image)
    with aics.GradientTape() as tape:
        tape.watch(x)
        total, _, _ = style_transfer.total_loss(capstone_reference.features(x, weights), targets)
    return float(total), tape.gradient(total, x).numpy()
return step
""",
        # the targets hoisted, but computed for the first content/style pair it ever saw
        "targets_of_the_first_pair_only": """
global _capstone_first_targets
try:
    targets = _capstone_first_targets
except NameError:
    targets = _capstone_first_targets = capstone_reference.targets(content, style, weights)
def step(image):
    x = aics.constant(image)
    with aics.GradientTape() as tape:
        tape.watch(x)
        total, _, _ = style_transfer.total_loss(capstone_reference.features(x, weights), targets)
    return float(total), tape.gradient(total, x).numpy()
return step
""",
    },
}

CORRECT_ANSWERS = {
    "capstone_speedup": {
        # the candidate first in each round, the median by hand from sorted lists
        "candidate_first_and_a_hand_median": """
def med(v):
    v = sorted(v); n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
candidate(); reference()
r, c = [], []
for _ in range(rounds):
    t = timer(); candidate(); c.append(timer() - t)
    t = timer(); reference(); r.append(timer() - t)
return med(r) / med(c)
""",
        # statistics.median
        "statistics_median": """
reference(); candidate()
r, c = [], []
for _ in range(rounds):
    for fn, times in ((reference, r), (candidate, c)):
        t = timer(); fn(); times.append(timer() - t)
return statistics.median(r) / statistics.median(c)
""",
    },
    "capstone_fast_step": {
        # the targets as tensors made once, the loss in float64 at the end
        "targets_as_tensors": """
tg = capstone_reference.targets(content, style, weights)
targets = {k: {n: aics.constant(v) for n, v in d.items()} for k, d in tg.items()}
def step(image):
    x = aics.constant(image)
    with aics.GradientTape() as tape:
        tape.watch(x)
        total, _, _ = style_transfer.total_loss(capstone_reference.features(x, weights), targets)
    grad = tape.gradient(total, x)
    return float(np.float64(total.numpy())), np.asarray(grad.numpy())
return step
""",
    },
}
