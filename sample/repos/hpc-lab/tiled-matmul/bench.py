import subprocess
for n in (256, 512, 1024, 2048):
    subprocess.run(["./build/matmul", str(n)], check=True)
