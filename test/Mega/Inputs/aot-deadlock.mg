# A linear graph whose ids are not a topological order: task 0 waits on the
# event task 1 triggers. Just in time it runs; with one worker and queues in
# id order (AOT), the worker waits on task 0 forever, task 1 behind it.
tgraph name=aot-deadlock form=linear sms=1 start=0 end=2
op 0 name=P kind=generic
task 0 op=0 tile=0 wait=[1] trigger=[2]
task 1 op=0 tile=1 wait=[0] trigger=[1]
event 0 count=0 launch=[1,1]
event 1 count=1 launch=[0,0]
event 2 count=1 launch=[]
