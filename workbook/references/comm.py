"""Chapter 20's reference: the alpha-beta model of one data-parallel step with a ring all-reduce
(Thakur, Rabenseifner & Gropp 2005; the chapter's formula)."""


def step_speedup(t_compute, nbytes, p, alpha, beta):
    allreduce = 2 * (p - 1) * alpha + 2 * (p - 1) / p * nbytes * beta
    return t_compute / (t_compute / p + allreduce)
