import time

import torch

torch.set_num_threads(2)
n=2048
a=torch.randn(n,n); b=torch.randn(n,n)
def rate(f):
    f(); best=1e9
    for _ in range(5):
        t=time.perf_counter(); f(); best=min(best,time.perf_counter()-t)
    return 2*n**3/best/1e9
print("mkl sgemm (aten.mm)", round(rate(lambda: torch.mm(a,b)),1), "Gflop/s")
import torch.utils.mkldnn

lin=torch.nn.Linear(n,n,bias=False); lin.weight.data=b
ml=torch.utils.mkldnn.to_mkldnn(lin)
am=a.to_mkldnn()
print("oneDNN linear (mkldnn)", round(rate(lambda: ml(am)),1), "Gflop/s")
