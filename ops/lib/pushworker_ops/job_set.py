"""The jobs of one fault run and the outcome each device must end with: every device belongs to
exactly one job."""
import json


class JobSet:
    def __init__(self, tag, index, nonce):
        self.tag, self.index, self.nonce = tag, index, nonce
        self.expected = {}          # device -> "delivered" | "invalid" | "failed"
        self.jobs = []              # (message id, body)
        self.groups = {}            # redis key -> members
        self.serial = 0

    def token(self, kind="delivered"):
        self.serial += 1
        prefix = {"delivered": "c0de", "invalid": "dead", "failed": "fa11"}[kind]
        token = f"{prefix}{self.index:02x}00{self.nonce:08x}{self.serial:048x}"
        assert len(token) == 64
        self.expected[token] = kind
        return token

    def tokens(self, count, invalid=0, failed=0):
        return ([self.token("invalid") for _ in range(invalid)] + [self.token("failed") for _ in range(failed)]
                + [self.token() for _ in range(count - invalid - failed)])

    def group(self, name, members):
        full = f"{self.tag}-{name}"
        self.groups[f"group:default:{full}"] = list(members)
        return full

    def job(self, tokens=(), groups=(), **extra):
        job_id = f"{self.tag}-j{len(self.jobs)}"
        body = {"id": job_id, "tokens": list(tokens), "payload": {"aps": {"alert": f"{self.tag} job {len(self.jobs)}"}}}
        if groups:
            body["groups"] = list(groups)
        body.update(extra)
        self.jobs.append((job_id, json.dumps(body).encode()))
        return job_id

    def raw(self, body, message_id=None, properties=None):
        message_id = message_id or f"{self.tag}-j{len(self.jobs)}"
        self.jobs.append((message_id, body, properties or {}))
        return message_id

    def standard(self, scale=1.0, big_group=True):
        """The usual mix: ~5,300 devices in ~28 jobs at scale 1."""
        for i in range(max(2, int(20 * scale))):
            self.job(self.tokens(40, invalid=1 if i % 4 == 0 else 0, failed=1 if i % 5 == 0 else 0))
        for _ in range(max(1, int(3 * scale))):
            self.job(self.tokens(250, invalid=1, failed=1))                        # > chunk size: split
        if big_group:
            big = self.group("big", self.tokens(max(300, int(3000 * scale)), invalid=3, failed=2))
            self.job(groups=[big])                                                  # chunks
        mid_members = self.tokens(max(150, int(400 * scale)), invalid=1)
        mid = self.group("mid", mid_members)
        mid2 = self.group("mid2", mid_members[:100] + self.tokens(max(100, int(300 * scale)), failed=1))
        self.job(mid_members[-20:] + self.tokens(10), groups=[mid, mid2])           # overlaps: each device once
        small_members = self.tokens(60, invalid=2, failed=1) + [f"not a token {self.tag}"]
        self.expected[f"not a token {self.tag}"] = "invalid"                         # token.invalid, status 0
        self.job(groups=[self.group("small", small_members)])
        self.job(self.tokens(5), groups=[f"{self.tag}-missing"])                    # a group that does not exist
