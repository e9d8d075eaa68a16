import sys
import matplotlib.pyplot as plt

sizes, times = [], []
for line in open(sys.argv[1]):
    n, t = line.split()
    sizes.append(int(n))
    times.append(float(t))
plt.loglog(sizes, times, marker="o")
plt.savefig("saxpy.png")
