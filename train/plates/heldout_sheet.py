"""Draws the held-out sheet of issue 67 from `carphoto-lab bench plates -v` logs: every false hide on
web and dash-cam that docs/plates-heldout-audit.json does not call a plate (red: the hidden
region; "audited" where the audit already calls it no plate, "new" where it is unaudited), then
every labelled plate the answer still reads (blue: the label; red: what `carphoto plates` hides).

    /usr/bin/python3 train/plates/heldout_sheet.py --carphoto ./carphoto --data ../shared/datasets \
        --extra ~/carphoto-data --out docs/research/plates-heldout-sheet-67.jpg web.log oi.log ...

Debian's OpenCV (python3-opencv). It prints each tile's line, to judge in writing beside the sheet.
"""
import argparse, json, re, os, subprocess, cv2, numpy as np
ap=argparse.ArgumentParser()
ap.add_argument('--carphoto',default='carphoto'); ap.add_argument('--data',default='../shared/datasets')
ap.add_argument('--extra',default=os.path.expanduser('~/carphoto-data')); ap.add_argument('--out',default='docs/research/plates-heldout-sheet-67.jpg')
ap.add_argument('--audit',default='docs/plates-heldout-audit.json'); ap.add_argument('logs',nargs='+')
args=ap.parse_args()
audit=json.load(open(args.audit))
dirs={s: os.path.join(args.data if s in ('plates-web-cc0','plates-dashcam-ro') else args.extra, s) for s in ('plates-web-cc0','plates-dashcam-ro','plates-openimages','plates-openlpr')}
def iou(a,b):
    ix=max(0,min(a[2],b[2])-max(a[0],b[0])); iy=max(0,min(a[3],b[3])-max(a[1],b[1]))
    i=ix*iy; u=(a[2]-a[0])*(a[3]-a[1])+(b[2]-b[0])*(b[3]-b[1])-i
    return i/u if u>0 else 0
def tile(st,f,box,label,col,hides=()):
    im=cv2.imread(os.path.join(dirs[st],'images',f)); b=box; w=b[2]-b[0]; h=b[3]-b[1]
    X0,Y0=max(0,b[0]-2*w),max(0,b[1]-3*h); X1,Y1=min(im.shape[1],b[2]+2*w),min(im.shape[0],b[3]+3*h)
    c=im[Y0:Y1,X0:X1].copy()
    for q in hides: cv2.polylines(c,[np.array([[p[0]-X0,p[1]-Y0] for p in q],np.int32)],True,(0,0,255),1)
    cv2.rectangle(c,(b[0]-X0,b[1]-Y0),(b[2]-X0,b[3]-Y0),col,1)
    sc=300/max(c.shape[1],1); c=cv2.resize(c,(300,max(1,min(200,int(c.shape[0]*sc)))))
    t=np.zeros((220,300,3),np.uint8); t[20:20+c.shape[0]]=c
    cv2.putText(t,label,(2,14),0,0.42,(0,255,255),1); return t
tiles=[]; report=[]
for log in args.logs:
    txt=open(log).read()
    for m in re.finditer(r'false (\S+)\.jpg: plate (\d+)x(\d+) at \((-?\d+),(-?\d+)\) score ([\d.]+)',txt):
        f=m.group(1)+'.jpg'; st=f.rsplit('-',1)[0]
        if st not in ('plates-web-cc0','plates-dashcam-ro'): continue
        w,h,x,y=map(int,m.group(2,3,4,5)); b=[x,y,x+w,y+h]
        a=[a for a in audit if a['file'].endswith(f) and iou(a['box'],b)>0.4]
        if a and a[-1]['plate']: continue
        tag='audited' if a else 'new'
        report.append(('false',st,f,b,m.group(6),tag)); tiles.append(tile(st,f,b,'false hide %s %s (%s)'%(f[-8:-4],m.group(6),tag),(0,0,255)))
    for line in re.findall(r'the answer read again: .*',txt):
        for m in re.finditer(r'(\S+\.jpg) \((\d+)x(\d+) at (\d+),(\d+)\)',line):
            f=m.group(1); st=f.rsplit('-',1)[0]; w,h,x,y=map(int,m.group(2,3,4,5)); b=[x,y,x+w,y+h]
            out=subprocess.run([args.carphoto,'plates','--json',os.path.join(dirs[st],'images',f)],capture_output=True,text=True).stdout
            hides=[p['hide'] for p in json.loads(out)['plates']]
            report.append(('readable',st,f,b,'',len(hides))); tiles.append(tile(st,f,b,'read again %s %s'%(st[7:11],f[-8:-4]),(255,128,0),hides))
for r in report: print(*r)
if tiles:
    while len(tiles)%6: tiles.append(np.zeros_like(tiles[0]))
    cv2.imwrite(args.out,np.vstack([np.hstack(tiles[i:i+6]) for i in range(0,len(tiles),6)]),[cv2.IMWRITE_JPEG_QUALITY,80])
print(len(tiles),'tiles')
