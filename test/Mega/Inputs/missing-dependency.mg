# Task 1 reads the tile task 0 writes, but no event orders them.
tgraph name=missing-dependency form=events sms=2
tensor a shape=[1,4]
tensor b shape=[1,4]
op 0 name=P kind=generic
op 1 name=C kind=generic
task 0 op=0 tile=0 writes={a[0:1,0:4]} trigger=[0]
task 1 op=1 tile=0 reads={a[0:1,0:4]} writes={b[0:1,0:4]} trigger=[0]
event 0 count=2
