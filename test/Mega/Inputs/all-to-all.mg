# Three producer tiles, two consumers reading whole rows.
tgraph name=all-to-all form=tiles sms=4
tensor a shape=[1,6]
tensor b shape=[1,2]
op 0 name=P kind=generic
op 1 name=C kind=generic
task 0 op=0 tile=0 writes={a[0:1,0:2]}
task 1 op=0 tile=1 writes={a[0:1,2:4]}
task 2 op=0 tile=2 writes={a[0:1,4:6]}
task 3 op=1 tile=0 reads={a[0:1,0:6]} writes={b[0:1,0:1]}
task 4 op=1 tile=1 reads={a[0:1,0:6]} writes={b[0:1,1:2]}
