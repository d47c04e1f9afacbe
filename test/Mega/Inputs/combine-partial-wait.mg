# Tasks 0 and 1 combine box a (the last of them to end writes it from both
# partial boxes p), but the reader waits only for task 0.
tgraph name=combine-partial-wait form=events sms=2
tensor p shape=[1,4]
tensor a shape=[1,4]
tensor b shape=[1,4]
op 0 name=Chunk kind=generic
op 1 name=Reader kind=generic
task 0 op=0 tile=0 writes={p[0:1,0:2], combine:a[0:1,0:4]} trigger=[0]
task 1 op=0 tile=1 writes={p[0:1,2:4], combine:a[0:1,0:4]}
task 2 op=1 tile=0 reads={a[0:1,0:4]} writes={b[0:1,0:4]} wait=[0]
event 0 count=1
