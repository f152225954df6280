#include <stdio.h>
#include <stdint.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(){ uint64_t n=200000000, x=1, one=1, y=3; double t0,t1;
 for(int r=0;r<3;r++){
 t0=now(); for(uint64_t i=0;i<n;i++){ __asm__ volatile("add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0":"+r"(x));} t1=now();
 printf("add imm: %.3f GHz\n", 8.0*n/(t1-t0)/1e9);
 t0=now(); for(uint64_t i=0;i<n;i++){ __asm__ volatile("add %1,%0\n\tadd %1,%0\n\tadd %1,%0\n\tadd %1,%0\n\tadd %1,%0\n\tadd %1,%0\n\tadd %1,%0\n\tadd %1,%0":"+r"(x):"r"(one));} t1=now();
 printf("add reg: %.3f GHz\n", 8.0*n/(t1-t0)/1e9);
 t0=now(); for(uint64_t i=0;i<n/3;i++){ __asm__ volatile("imul %1,%0\n\timul %1,%0\n\timul %1,%0\n\timul %1,%0\n\timul %1,%0\n\timul %1,%0\n\timul %1,%0\n\timul %1,%0":"+r"(y):"r"(one));} t1=now();
 printf("imul (lat 3): %.3f GHz\n", 3*8.0*(n/3)/(t1-t0)/1e9);}
 return (int)(x+y)&1;}
