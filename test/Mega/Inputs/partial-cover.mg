# A writes two tiles of a; B reads all of a; C tile 0 reads b and a's tile 0
# (implied through B), C tile 1 reads only a's tile 1 (not implied).
tgraph name=partial-cover form=tiles sms=4
tensor a shape=[1,4]
tensor b shape=[1,1]
tensor c shape=[1,2]
op 0 name=A kind=generic
op 1 name=B kind=generic
op 2 name=C kind=generic
task 0 op=0 tile=0 writes={a[0:1,0:2]}
task 1 op=0 tile=1 writes={a[0:1,2:4]}
task 2 op=1 tile=0 reads={a[0:1,0:4]} writes={b[0:1,0:1]}
task 3 op=2 tile=0 reads={b[0:1,0:1], a[0:1,0:2]} writes={c[0:1,0:1]}
task 4 op=2 tile=1 reads={a[0:1,2:4]} writes={c[0:1,1:2]}
