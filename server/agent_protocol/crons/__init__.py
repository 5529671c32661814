"""Crons of the Agent Protocol door: stored runs made on a schedule.

`routes` (the wire), `schemas` (request and answer bodies), `rows` (checks, patches,
shapes), `store` (`ap_crons`, `ap_cron_ticks`), `schedule` (cron expressions),
`scheduler` (the lifespan's task that fires due crons) and `firing` (one tick: a run of
the door, or a skip saying why).
"""
