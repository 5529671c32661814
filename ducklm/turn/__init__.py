"""The logic of one turn that the nodes call: routing, prompting, plans, coding, tool steps.

Pure decisions and helpers; the node functions themselves live in `ducklm.nodes`.
"""
