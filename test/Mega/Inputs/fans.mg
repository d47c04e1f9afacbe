# Every fan pattern normalization rewrites:
#   tasks 0 and 1 wait on nothing (0 -> N), tasks 4 and 5 trigger nothing
#   (N -> 0), task 0 triggers two events (1 -> N), task 4 waits on two
#   events (N -> 1).
tgraph name=fans form=events sms=4
op 0 name=P kind=generic
op 1 name=Q kind=generic
op 2 name=R kind=generic
task 0 op=0 tile=0 trigger=[0,1]
task 1 op=0 tile=1 trigger=[0]
task 2 op=1 tile=0 wait=[0] trigger=[2]
task 3 op=1 tile=1 wait=[1] trigger=[2]
task 4 op=2 tile=0 wait=[0,2]
task 5 op=2 tile=1 wait=[2]
event 0 count=2
event 1 count=1
event 2 count=2
