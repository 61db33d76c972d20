/**
 * Bounds the values of a metric label taken from user data (workflow names,
 * task names, queues). Every distinct value is a time series in every
 * Prometheus that scrapes us, so a namespace that generates workflow names, or
 * a worker polling made-up queues, must not be able to grow them without end.
 *
 * With an allow-list (NODE_FLOW_METRICS_WORKFLOWS / NODE_FLOW_METRICS_TASKS)
 * exactly those names are labels. Without one, the first {@link DEFAULT_LABEL_LIMIT}
 * names this process meets are, which needs no configuration on an install
 * with a few dozen workflows; the set is per process, so two processes may
 * admit different names once past the bound — set the list to make it stable.
 * Everything else is {@link OTHER_LABEL}.
 */

/** Names admitted without an allow-list, per label, per process. */
export const DEFAULT_LABEL_LIMIT = 50;
/** The label value every name outside the allowed set is counted under. */
export const OTHER_LABEL = "other";

export class LabelFolder {
  private readonly admitted: Set<string>;
  private readonly open: boolean;

  /** `allowed`: the allow-list, or undefined to admit the first `limit` names seen. */
  constructor(
    allowed: readonly string[] | undefined,
    private readonly limit = DEFAULT_LABEL_LIMIT,
  ) {
    this.admitted = new Set(allowed ?? []);
    this.open = allowed === undefined;
  }

  /** The label value for `name`: itself when admitted, otherwise {@link OTHER_LABEL}. */
  fold(name: string): string {
    if (this.admitted.has(name)) return name;
    if (this.open && this.admitted.size < this.limit && name !== OTHER_LABEL) {
      this.admitted.add(name);
      return name;
    }
    return OTHER_LABEL;
  }
}
