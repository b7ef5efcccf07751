#include "lib/output/svg.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define ROW 17		/* bar height + gap */
#define TOP 46		/* title and help line */
#define BOTTOM 10
#define SIDE 8
#define CHAR_W 7	/* approximate advance of the 12px monospace font */
#define MIN_W 0.3	/* narrower bars (and what they call) are left out */

struct svg {
	const struct tc_calltree_node *node;
	const struct tc_calltree *t;
	FILE *f;
	double scale;		/* pixels per instruction */
	unsigned rows;		/* deepest frame + 1 */
	uint64_t all;
};

static void xml(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}

/* A stable colour per name: blues to greens, lighter for longer names' odd hashes. */
static void colour(const char *name, char *buf, size_t len)
{
	uint32_t h = 2166136261u;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	snprintf(buf, len, "hsl(%u,%u%%,%u%%)", 150 + h % 90, 40 + (h >> 8) % 30,
		 58 + (h >> 16) % 16);
}

/* The label that fits w pixels: the name, cut with ".." or nothing. */
static void label(FILE *f, const char *name, double w)
{
	int fit = (int)((w - 6) / CHAR_W);
	size_t n = strlen(name);
	char buf[512];

	if (fit < 3)
		return;
	if (n <= (size_t)fit) {
		xml(f, name);
		return;
	}
	if (fit > (int)sizeof(buf) - 1)
		fit = sizeof(buf) - 1;
	snprintf(buf, (size_t)fit - 1, "%s", name);
	xml(f, buf);
	fputs("..", f);
}

static int frame(struct svg *s, size_t i, unsigned depth, uint64_t at)
{
	const struct tc_calltree_node *n = &s->node[i];
	double x = SIDE + (double)at * s->scale, w = (double)n->total * s->scale;
	double y = TOP + (double)(s->rows - 1 - depth) * ROW;
	size_t *kids;
	ptrdiff_t nk;
	char fill[32];

	if (w < MIN_W)
		return 0;
	colour(n->name, fill, sizeof(fill));
	fprintf(s->f, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\" data-n=\"",
		(double)at / (double)s->all, (double)n->total / (double)s->all, depth);
	xml(s->f, n->name);
	fputs("\"><title>", s->f);
	xml(s->f, n->name);
	fprintf(s->f, "\n%" PRIu64 " instructions (%.2f%%), %" PRIu64 " in itself</title>",
		n->total, 100.0 * (double)n->total / (double)s->all, n->self);
	fprintf(s->f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>",
		x, y, w, ROW - 1, fill);
	fprintf(s->f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + ROW - 5);
	label(s->f, n->name, w);
	fputs("</text></g>\n", s->f);

	nk = tc_calltree_children(s->t, i, &kids);
	if (nk < 0)
		return -1;
	for (ptrdiff_t k = 0; k < nk; k++) {
		if (frame(s, kids[k], depth + 1, at)) {
			free(kids);
			return -1;
		}
		at += s->node[kids[k]].total;
	}
	free(kids);
	return 0;
}

/* Click to zoom: the clicked bar spans the width, what it calls scales with it, its callers
 * stay as full-width dimmed bars, the rest hides. Our own, small on purpose. */
static const char script[] =
	"var W=%u,S=%d,C=%d,fs=[].slice.call(document.querySelectorAll('g.f')),\n"
	"  rs=document.getElementById('reset');\n"
	"function num(g,a){return +g.getAttribute('data-'+a);}\n"
	"function put(g,x,w,show,dim){\n"
	"  g.style.display=show?'':'none'; if(!show)return;\n"
	"  var r=g.querySelector('rect'),t=g.querySelector('text'),n=g.getAttribute('data-n'),\n"
	"    fit=Math.floor((w-6)/C);\n"
	"  r.setAttribute('x',x); r.setAttribute('width',w); t.setAttribute('x',x+3);\n"
	"  g.setAttribute('opacity',dim?'0.55':'1');\n"
	"  t.textContent=fit<3?'':n.length<=fit?n:n.slice(0,fit-2)+'..';\n"
	"}\n"
	"function zoom(z){\n"
	"  var zx=num(z,'x'),zw=num(z,'w'),zd=num(z,'d'),span=W-2*S,e=1e-9;\n"
	"  fs.forEach(function(g){\n"
	"    var x=num(g,'x'),w=num(g,'w'),d=num(g,'d');\n"
	"    if(d<zd)put(g,S,span,x<=zx+e&&x+w>=zx+zw-e,true);\n"
	"    else put(g,S+(x-zx)/zw*span,w/zw*span,x>=zx-e&&x+w<=zx+zw+e,false);\n"
	"  });\n"
	"  rs.style.display='';\n"
	"}\n"
	"function reset(){\n"
	"  fs.forEach(function(g){put(g,S+num(g,'x')*(W-2*S),num(g,'w')*(W-2*S),true,false);});\n"
	"  rs.style.display='none';\n"
	"}\n"
	"fs.forEach(function(g){g.addEventListener('click',function(ev){ev.stopPropagation();zoom(g);});});\n"
	"document.documentElement.addEventListener('click',reset);\n";

int tc_svg_write(struct tc_calltree *t, FILE *f, const struct tc_svg_opts *o)
{
	struct svg s = { .t = t, .f = f };
	unsigned width = o && o->width ? o->width : 1200, height, *depth;
	const char *title = o && o->title ? o->title : "Flame graph";
	size_t n, *top;
	ptrdiff_t nt;
	int rc = 0;

	tc_calltree_sum(t);
	s.node = tc_calltree_nodes(t, &n);
	s.all = s.node[0].total;
	depth = calloc(n, sizeof(*depth));
	if (!depth)
		return -1;
	/* parents come before children */
	for (size_t i = 1; i < n; i++) {
		depth[i] = depth[s.node[i].parent] + 1;
		if (depth[i] > s.rows)
			s.rows = depth[i];
	}
	free(depth);
	s.scale = s.all ? (double)(width - 2 * SIDE) / (double)s.all : 0;
	height = TOP + (s.rows ? s.rows : 1) * ROW + BOTTOM;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" "
		   "height=\"%u\" viewBox=\"0 0 %u %u\">\n", width, height, width, height);
	fputs("<style>text{font:12px monospace;fill:#102030;pointer-events:none}"
	      "g.f{cursor:pointer}g.f:hover rect{stroke:#203040;stroke-width:1}"
	      ".h{font:15px sans-serif}.n{font:11px sans-serif;fill:#405060}</style>\n", f);
	fprintf(f, "<rect width=\"%u\" height=\"%u\" fill=\"#f6f8f4\"/>\n", width, height);
	fprintf(f, "<text class=\"h\" x=\"%d\" y=\"20\">", SIDE);
	xml(f, title);
	fprintf(f, " (%" PRIu64 " instructions)</text>\n", s.all);
	fprintf(f, "<text class=\"n\" x=\"%d\" y=\"36\">click a bar to zoom, click outside"
		   " to reset</text>\n", SIDE);
	fprintf(f, "<text id=\"reset\" class=\"n\" x=\"%u\" y=\"36\" text-anchor=\"end\" "
		   "style=\"display:none\">zoomed</text>\n", width - SIDE);
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", f);
	fprintf(f, script, width, SIDE, CHAR_W);
	fputs("]]></script>\n", f);

	if (s.all) {
		uint64_t at = 0;

		nt = tc_calltree_children(t, 0, &top);
		if (nt < 0)
			return -1;
		for (ptrdiff_t k = 0; k < nt && !rc; k++) {
			rc = frame(&s, top[k], 0, at);
			at += s.node[top[k]].total;
		}
		free(top);
	}
	fputs("</svg>\n", f);
	return rc || ferror(f) ? -1 : 0;
}
